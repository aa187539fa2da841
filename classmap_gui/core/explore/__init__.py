"""What the Explore panel and the inspection views show, computed without a window: confusions,
embeddings, the whole-embedding map, the live query on it and what a map is coloured by."""
