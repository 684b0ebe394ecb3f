"""FinalReport to Markdown, HTML and JSON, and links that open a PDF at a page."""
