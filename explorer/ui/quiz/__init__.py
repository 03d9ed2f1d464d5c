"""The quiz's windows: practice questions and a class's gathered answers."""
