"""``python -m formatenforcer``: the same command line as the ``formatenforcer`` script."""

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
