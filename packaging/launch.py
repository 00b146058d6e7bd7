"""Entry script of the PyInstaller bundle: the same as the `testbed-studio` console script."""
import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
