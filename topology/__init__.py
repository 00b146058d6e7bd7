"""Testbed Studio's domain core: the test-bed model, its file format, graph, validation.

Qt-free and transport-free by design: nothing under topology/ imports PySide6, pyqtgraph,
paramiko or winrm (tests/test_layering.py proves it).
"""
