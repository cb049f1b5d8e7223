"""A small shop served by the official MCP Python SDK, and its ``tools/list`` as a client
sees it. The result types are pydantic models with nested models, lists of models, an
optional field, bounds, an enum and a self-referencing model, so the SDK writes each
tool's schemas with local ``$defs``.

``python tests/openapi/mcp_sdk_tools.py`` rewrites the committed copy,
``tests/fixtures/openapi/mcp_sdk_tools_list.json`` (needs ``mcp``, in the dev extra).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

FIXTURE = Path(__file__).parent.parent / "fixtures" / "openapi" / "mcp_sdk_tools_list.json"


class Money(BaseModel):
    amount: float = Field(ge=0)
    currency: str = Field(min_length=3, max_length=3)


class Item(BaseModel):
    sku: str
    quantity: int = Field(ge=1)
    price: Money
    tags: list[str] = []


class Order(BaseModel):
    order_id: str
    status: Literal["open", "shipped", "delivered"]
    items: list[Item]
    total: Money
    gift_message: str | None = None


class Category(BaseModel):
    name: str
    children: list[Category] = []


class Line(BaseModel):
    sku: str
    quantity: int = Field(ge=1)


def server() -> Any:
    """The SDK's high-level server with three tools (their bodies are never run)."""
    try:
        from mcp.server.mcpserver import MCPServer as Server  # mcp 2
    except ImportError:
        from mcp.server.fastmcp import FastMCP as Server  # mcp 1

    shop = Server("shop")

    @shop.tool()
    def get_order(order_id: str) -> Order:
        """One order with its items."""
        raise NotImplementedError

    @shop.tool()
    def create_order(lines: list[Line], note: str | None = None) -> Order:
        """Place an order."""
        raise NotImplementedError

    @shop.tool()
    def list_categories(depth: int = 1) -> list[Category]:
        """The category tree."""
        raise NotImplementedError

    return shop


async def _listed(shop: Any) -> list[Any]:
    try:
        from mcp import Client  # mcp 2: a client connected to the server in-process
    except ImportError:
        return list(await shop.list_tools())  # mcp 1: the server's own tools/list handler
    async with Client(shop) as client:
        return list((await client.list_tools()).tools)


def tools_list() -> list[dict[str, Any]]:
    """The tools of :func:`server` as JSON, the way a client dumps ``tools/list``."""
    tools = asyncio.run(_listed(server()))
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps({"tools": tools_list()}, indent=2) + "\n", encoding="utf-8")
