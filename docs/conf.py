# Sphinx configuration of the project's own documentation.
project = "memcg kernel memory accounting for Linux 6.1"
author = "the memcg-kmem porting team"
copyright = "2026, the memcg-kmem porting team"
extensions = []
exclude_patterns = ["_build"]
html_theme = "sphinx_rtd_theme"
html_title = project
nitpicky = True
