"""`python -m gretriever_neo4j.server ...`: runs the argparse CLI in `main.py` (see there)."""

import sys

from gretriever_neo4j.server.main import main

sys.exit(main())
