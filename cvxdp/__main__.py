"""``python -m cvxdp``: the ``cvxdp`` command (:func:`cvxdp.cli.main`), for when the console
script is not on PATH."""

import sys

from cvxdp.cli import main

if __name__ == "__main__":
    sys.exit(main())
