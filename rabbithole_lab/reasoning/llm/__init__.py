"""The LLM reasoner: the Ollama adapter, its prompts' inputs, the model's window and the call deadline."""
