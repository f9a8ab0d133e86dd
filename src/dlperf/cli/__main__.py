import sys

from dlperf.cli import main

sys.exit(main())
