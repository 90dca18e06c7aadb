"""Tests of the sandbox package: real processes, each containment, the shim."""
