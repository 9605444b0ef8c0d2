#!/usr/bin/env python3
"""Writes the accuracy benchmark's photos (data/photos/*.png) from scikit-image's bundled
sample images, converted to 8-bit gray exactly as below, so anyone can remake them:
    python3 -m pip install scikit-image==0.26.0 && python3 scripts/make_photos.py
Provenance and licences of each image: data/photos/README.md."""
import pathlib

import numpy as np
import skimage
import skimage.color
import skimage.data
import skimage.io

NAMES = ["astronaut", "coffee", "chelsea", "rocket", "coins"]


def main() -> None:
    out = pathlib.Path(__file__).resolve().parent.parent / "data" / "photos"
    out.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        image = getattr(skimage.data, name)()
        if image.ndim == 3:
            # Rec. 709 luma in [0, 1], then 8-bit: the photos are single-channel images.
            image = np.round(skimage.color.rgb2gray(image) * 255.0).astype(np.uint8)
        skimage.io.imsave(out / f"{name}.png", image, check_contrast=False)
        print(f"{name}: {image.shape[1]}x{image.shape[0]}")


if __name__ == "__main__":
    main()
