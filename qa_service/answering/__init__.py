"""Answering: whether to answer, the prompt, the models, the citation checks, the measured quality."""
