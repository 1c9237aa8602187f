"""Step 3 of the pipeline: retrievers choose each record's few-shot examples from
a pool (the ``retrieve_examples`` hook)."""
