"""The front ends: the Typer CLI (`parm`, `parm audit`, cli.py and headless.py) and the Textual
app (app.py, screens/, widgets/, parm.tcss). Display and interaction only, no numerical code:
every computation is a call into engine, most of all engine.pipeline.run_audit.
"""
