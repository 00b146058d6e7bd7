from widgets import pyside_imports

pyside_imports.install()
