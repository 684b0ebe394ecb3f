"""The research agent: a LangGraph over the knowledge base, the rabbithole engine and a reasoner."""
