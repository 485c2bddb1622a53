"""Reading the corpus: readers for each file shape, labels, text cleaning, chunks and token counts."""
