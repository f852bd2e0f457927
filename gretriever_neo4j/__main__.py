from gretriever_neo4j.cli import main

main()
