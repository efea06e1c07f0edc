"""portagrad.vision: computer vision on portagrad, in the role ChainerCV played for Chainer.

Subpackages: :mod:`~portagrad.vision.utils` (boxes, masks, NMS, image files),
:mod:`~portagrad.vision.transforms`, :mod:`~portagrad.vision.datasets` (local folders
only), :mod:`~portagrad.vision.evaluations`, :mod:`~portagrad.vision.models`,
:mod:`~portagrad.vision.visualizations` and :mod:`~portagrad.vision.extensions` (trainer
extensions running the metrics).

Conventions: images are ``(C, H, W)`` RGB arrays with values in ``[0, 255]``; boxes are
``(y_min, x_min, y_max, x_max)`` with exclusive ends; labels are integers from 0.
"""

from . import datasets as datasets
from . import evaluations as evaluations
from . import extensions as extensions
from . import models as models
from . import transforms as transforms
from . import utils as utils
from . import visualizations as visualizations
