"""``tracemine.integrations`` itself loads no framework and nothing heavy: only the module
of the integration a user picks needs its framework."""

from __future__ import annotations

from helpers import heavy_imports


def test_the_package_loads_no_framework() -> None:
    frameworks = ("opentelemetry", "agents", "langchain_core", "openinference")
    assert heavy_imports("tracemine.integrations", *frameworks) == []


def test_an_integration_loads_its_framework_only() -> None:
    assert heavy_imports("tracemine.integrations.otel", "agents", "langchain_core") == []
