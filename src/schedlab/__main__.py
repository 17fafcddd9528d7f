"""``python -m schedlab``: the same command line as ``schedlab``."""
from schedlab.cli.main import main

if __name__ == "__main__":
    main()
