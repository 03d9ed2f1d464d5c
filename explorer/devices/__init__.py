"""Qt-free: what hardware is there. Probes fill ``model.Device`` records; ``discover`` merges them."""
