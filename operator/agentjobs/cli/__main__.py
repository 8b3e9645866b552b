import sys

from agentjobs.cli import main

sys.exit(main())
