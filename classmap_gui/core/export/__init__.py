"""Exporting a recogniser as a folder that runs with numpy and OpenCV alone: the writer, the
predictor's template and the checks it inlines."""
