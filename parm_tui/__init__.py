"""parm's front ends: the Textual app and the Typer CLI (no numerical code here)."""
