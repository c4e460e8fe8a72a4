"""pmlab_report: turn a pmlab run directory's results.json into a self-contained report.html.

Pipeline (pure functions): schema.load -> model.from_document -> render.render_report.
"""

__version__ = "0.1.0"
