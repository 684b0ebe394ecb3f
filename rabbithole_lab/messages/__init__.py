"""Every text a reader sees, in German and English: the catalogue and its workbench section."""
