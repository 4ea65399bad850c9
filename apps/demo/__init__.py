"""The demo dataset `make run` loads (`manage.py load_demo`): above every other app, imported by
none of them."""
