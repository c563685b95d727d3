"""Parts of nn.Module kept in their own files (module.py holds the class)."""
