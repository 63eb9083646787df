"""The settings: every setting declared once, with its default, rule, type, section, label, help
and meaning (`declared.SETTINGS`), the rule of each kind of value (`rules`), and `AuditConfig`,
every setting a typed field, read and validated in one place (`config`), with the rules between
settings (`checks`).

May import engine.cluster (the scheduler setting's check) and engine.core.
"""
