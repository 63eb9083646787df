"""The report, report.json, report.md and report.html, from one content: one item's part
(`item_content`), report.json of a run (`report_json`; its JSON Schema is package data beside
this package, engine/outputs/report.schema.json), report.md (`markdown` for one item and the Markdown text rules,
`report_md` for a run), report.html (`report_html`, one item's section in `html_items`, the
agreement section in `html_agreement`, the plots in `plots`, the Jinja2 `templates/`), what a
lead concludes (`conclusions`, `flag_check`), the review's decisions (`review_summary`), and
the raters' and the reads' parts of every output (`rater_outputs`: raters.csv's effect columns,
rater_item_bias.csv, rater_feedback.csv; `reads_outputs`: consensus.csv, agreement.csv), which
share the report's text rules.

May import engine.outputs' declarations (columns, declared), engine.results and the stages
below them; never the writers above it (engine.outputs' names, sets, write, session).
"""
