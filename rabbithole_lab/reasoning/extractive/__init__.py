"""The extractive reasoner: rules and fitted models over the context, no LLM."""
