"""The site build: renders bilingual pages from templates + data, computes every
number with lab_core/lab_view, and ships the lab's runtime assets."""
