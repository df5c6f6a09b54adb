"""Fit hardware-spec parameters to measurements and write them into a spec file, split by job.

- `params`: dotted spec parameters ("dla.mac_efficiency", "gpu.kernel_floor_s", ...), their priors and bounds;
- `observations`: measured numbers and how to predict them (whole-network totals, groups of a measured profile
  joined to predicted steps by dlasim.measured.join, or any function of the platform);
- `fitting`: bounded soft_l1 least squares on log(predicted / measured), with the identifiability checks;
- `spec_patch`: the source TOML text with the fitted values and their source lines patched in;
- `command`: `dlasim calibrate` from typed values (the CLI parses the arguments), and its terminal view.
"""
from .command import calibrate, default_params, render
from .fitting import COLUMN_MIN, F_SCALE, SIGMA_MAX, fit, fitted_values, public, source_line
from .observations import CostCache, Observation, error_table, predict_all, row_observations, total_observation
from .params import (BLOCKS, DEFAULT_PARAMS, EFF_BOUNDS, FALLBACK_PRIOR, TIME_BOUNDS, apply, bounds_of, get_param,
                     prior_value)
from .spec_patch import patch_spec_text, write_spec

__all__ = ["BLOCKS", "COLUMN_MIN", "CostCache", "DEFAULT_PARAMS", "EFF_BOUNDS", "FALLBACK_PRIOR", "F_SCALE",
           "Observation", "SIGMA_MAX", "TIME_BOUNDS", "apply", "bounds_of", "calibrate", "default_params",
           "error_table", "fit", "fitted_values", "get_param", "patch_spec_text", "predict_all", "prior_value",
           "public", "render", "row_observations", "source_line", "total_observation", "write_spec"]
