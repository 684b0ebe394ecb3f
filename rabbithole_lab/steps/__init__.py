"""The research steps the graph's nodes call: a task's rounds, the query anchor, the synthesis context."""
