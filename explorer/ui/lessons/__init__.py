"""The lesson player's Qt view (the model is ``explorer.lessons``)."""
