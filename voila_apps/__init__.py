"""The Voilà apps (explorer, dashboard, inoculation): notebooks shipped as package data, so that
``workbench serve`` finds them in a checkout and in an installed wheel alike."""
