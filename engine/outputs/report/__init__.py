"""The report, report.json, report.md and report.html, from one content: one item's part
(`item_content`), report.json of a run (`report_json`; its JSON Schema is package data in
engine/outputs/), report.md (`markdown`: one item's, and the Markdown text rules; `report_md`:
a run's), report.html (`report_html`, one item's section in `html_items`, the agreement section
in `html_agreement`, the plots in `plots`, the Jinja2 `templates/`), what a lead concludes
(`conclusions`, `flag_check`), the review's decisions (`review_summary`), and the raters' and
the reads' parts of every output (`rater_outputs`: raters.csv's effect columns,
rater_item_bias.csv, rater_feedback.csv; `reads_outputs`: consensus.csv, agreement.csv), which
share the report's text rules.

May import engine.outputs' declarations (columns, declared, tables, names), engine.results and
the stages below them; never the writers (write, sets, manifest, session), reviewed.py or the
workbook.
"""
