"""Moved to the package `app.ansible`; kept for the names other modules import."""
from app.ansible import Export, export, inventory_name, reach

__all__ = ["Export", "export", "inventory_name", "reach"]
