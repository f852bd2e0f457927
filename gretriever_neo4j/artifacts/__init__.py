"""What training leaves on disk and the library reads back: the per-graph model registry (`registry`: which
retriever, reader and generator `gqa train` made for a graph, with their details) and tagged files (a format tag
and version checked before any weights are read)."""
