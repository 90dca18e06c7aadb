"""Workbench: durable, contained, streamable executions of bash commands and code."""
