"""The HTTP face of Workbench."""
