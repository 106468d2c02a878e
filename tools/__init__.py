"""Developer tools: the static server, the browser chooser, the validation report and the calibration fits.

Run them with ``python -m labtools.<name>``."""
