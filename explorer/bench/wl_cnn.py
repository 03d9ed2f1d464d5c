"""One training step of a small CIFAR-10-shaped CNN on synthetic batches (nothing downloaded).

Imported only inside the benchmark worker. The batch starts in pageable host memory, as a
DataLoader without ``pin_memory`` hands it over, so the GPU step includes its copy; the copy is
also timed alone to give ``copy_share``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.bench.execute import Outcome, PointError, PointSpec, time_torch, torch_device
from explorer.bench.variants import Variant
from explorer.bench.workload import CNN_CONVS, CNN_DENSE, Workload, cnn_forward_flops_per_image

if TYPE_CHECKING:  # pragma: no cover
    import torch
    from torch import nn


def build_cnn() -> nn.Sequential:
    """The network whose FLOPs ``workload.cnn_forward_flops_per_image`` counts: conv-ReLU-pool x3, 2 dense."""
    from torch import nn

    layers: list[nn.Module] = []
    for cin, cout, k, pad, pool in CNN_CONVS:
        layers += [nn.Conv2d(cin, cout, k, padding=pad), nn.ReLU()]
        if pool:
            layers.append(nn.MaxPool2d(2))
    layers.append(nn.Flatten())
    for i, (fin, fout) in enumerate(CNN_DENSE):
        layers.append(nn.Linear(fin, fout))
        if i < len(CNN_DENSE) - 1:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def train_step_point(w: Workload, spec: PointSpec) -> Outcome:
    import torch

    dev = torch_device(spec)
    batch = spec.size
    torch.manual_seed(batch)
    model = build_cnn().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    images = torch.randn(batch, 3, 32, 32)  # pageable host memory, like a default DataLoader batch
    labels = torch.randint(0, 10, (batch,))

    def copy_batch() -> tuple[torch.Tensor, torch.Tensor]:
        return images.to(dev), labels.to(dev)  # on the CPU .to() returns the same tensors: no copy

    def train_step() -> None:
        x, y = copy_batch()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    timing = time_torch(spec, train_step, dev)
    extra: dict[str, float | str] = {"forward_mflop_per_image": cnn_forward_flops_per_image() / 1e6}
    if dev.type == "cuda":
        extra["max_forward_difference"] = _check_forward(model, images[:8], dev)
    if dev.type == "cuda":
        copy_timing = time_torch(spec, copy_batch, dev)
        extra["copy_s"] = copy_timing.median_s
        extra["copy_share"] = min(1.0, copy_timing.median_s / timing.median_s)
    else:
        extra["copy_share"] = 0.0
        extra["copy_note"] = "no copy: the batch is already in host memory"
    threads = torch.get_num_threads() if dev.type == "cpu" else None
    return Outcome(timing, items=float(batch), threads=threads, peak=None, extra=extra)


#: the GPU's forward pass may differ from the CPU's by this share of the largest output: cuDNN
#: runs float32 convolutions in TF32 by default on Ampere and newer (10-bit mantissas)
FORWARD_TOLERANCE = 2e-2


def _check_forward(model: nn.Module, images: torch.Tensor, dev: torch.device) -> float:
    """The trained model's forward pass on the GPU against the same weights on the CPU; PointError
    when they disagree (a wrong kernel, a corrupt copy). Returns the difference relative to the
    largest output."""
    import copy

    import torch

    with torch.no_grad():
        on_gpu = model(images.to(dev)).cpu()
        on_cpu = copy.deepcopy(model).cpu()(images)
    scale = float(on_cpu.abs().max()) + 1e-12
    difference = float((on_gpu - on_cpu).abs().max()) / scale
    if not difference <= FORWARD_TOLERANCE:
        raise PointError(
            f"the GPU's forward pass differs from the CPU's by {difference:.2g} of the largest output "
            f"(at most {FORWARD_TOLERANCE:g})"
        )
    return difference


CNN_STEP = (Variant("plain", "", train_step_point),)
