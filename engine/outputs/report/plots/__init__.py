"""report.html's plots (and the live report's trend panels): matplotlib figures as inert inline
SVG (`drawing`: the figures, drawn through matplotlib's object API, and `inline_svg`, which keeps
only what draws), each kept by what it draws so that a page written again draws only what
changed (`kept`: in the cache folder's `plots`, cleaned again when read).
"""
