"""An agent behind any OpenAI-compatible chat-completions endpoint (a hosted model, or a
local llama.cpp, vLLM or Ollama server), over plain ``urllib``: no client package.

Nothing is sent unless the user names the endpoint. The key comes from the environment
variable the user names (``OPENAI_API_KEY`` by default); none is needed for a local server.
Temperature and a per-run seed are sent with every request; what the endpoint reports back
(model, ``system_fingerprint``) is kept with the run.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

from tracemine.arms.agent import Reply, function_tools
from tracemine.arms.cases import Case
from tracemine.errors import TracemineError


class EndpointError(TracemineError):
    """The chat endpoint could not be reached or answered something unreadable."""


class OpenAIAgent:
    """Chat completions at ``base_url`` (``…/v1``) with ``model``."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        temperature: float = 0.0,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model: str | None = model
        self.temperature, self.timeout = temperature, timeout
        self.api_key = os.environ.get(api_key_env)
        self.seed = 0

    def start(self, case: Case, seed: int) -> None:
        self.seed = seed

    def reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        body = {
            "model": self.model,
            "messages": messages,
            "tools": function_tools(tools),
            "temperature": self.temperature,
            "seed": self.seed,
        }
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:200]
            raise EndpointError(f"{self.url}: HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise EndpointError(f"{self.url}: {exc}") from None
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise EndpointError(f"{self.url}: the answer has no choices[0].message") from None
        if not isinstance(message, dict):
            raise EndpointError(f"{self.url}: choices[0].message is not an object")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        tokens = usage.get("total_tokens")
        kept = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            kept["tool_calls"] = message["tool_calls"]
        details = {
            "model": data.get("model"),
            "seed": self.seed,
            "temperature": self.temperature,
            "system_fingerprint": data.get("system_fingerprint"),
        }
        return Reply(kept, tokens if isinstance(tokens, int) else None, details)
