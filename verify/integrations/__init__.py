"""verify inside other tools: the pytest plugin, and quiet exits after Triton."""
