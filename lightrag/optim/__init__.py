"""Optimisation and benchmarking of prompts.

* :class:`BenchmarkRunner`: run prompt variants of a pipeline over a dataset; report means with
  bootstrap CIs, paired differences with p-values, failures, tokens and latency; JSON, CSV, PNG.
* :class:`Trainer` with :class:`TraceFewShot` (demo selection from teacher traces; the class
  ``lightrag.optim.few_shot.BootstrapFewShot``) and :class:`TextGradOptimizer` (LLM feedback ->
  prompt rewrite): a proposal is kept only when the validation score improves.
* :class:`Parameter` / :class:`ParameterType` (from ``lightrag.core``) mark what may change.
* lightrag 0.1's optimizers, at their 0.1 paths: :mod:`~lightrag.optim.sampler`
  (:class:`RandomSampler`, :class:`ClassSampler`), :mod:`~lightrag.optim.few_shot_optimizer`
  (``BootstrapFewShot``, exported here too as in 0.1; also named :class:`SamplerFewShot`),
  :mod:`~lightrag.optim.llm_augment` (:class:`LLMAugmenter`) and
  :mod:`~lightrag.optim.llm_optimizer` (:class:`LLMOptimizer`, OPRO-style; also Trainer-ready).

Example:
    >>> from lightrag.optim import BenchmarkRunner, Parameter, ParameterType
    >>> Parameter(data="", param_type=ParameterType.DEMOS).param_type.value
    'demos'
"""

from lightrag.core.parameter import Parameter, ParameterType
from lightrag.optim.benchmark import (
    BenchmarkRunner,
    Variant,
    build_variant,
    fresh_pipeline,
    load_variants,
)
from lightrag.optim.evaluation import ItemResult, attach_cache, evaluate_pipeline
from lightrag.optim.few_shot import BootstrapFewShot as TraceFewShot
from lightrag.optim.few_shot import format_demos
from lightrag.optim.few_shot_optimizer import SamplerFewShot
from lightrag.optim.llm_augment import LLMAugmenter
from lightrag.optim.llm_optimizer import LLMOptimizer
from lightrag.optim.optimizer import Optimizer, ParamChange, Proposal, Sample
from lightrag.optim.report import BenchmarkReport, VariantResult
from lightrag.optim.sampler import ClassSampler, RandomSampler, Sampler
from lightrag.optim.stats import bootstrap_ci, holm_adjust, paired_permutation_test
from lightrag.optim.text_grad import TextGradOptimizer, parse_new_value
from lightrag.optim.trainer import StepRecord, Trainer, TrainerResult

#: lightrag 0.1's ``lightrag.optim.BootstrapFewShot``: the sampler-driven few-shot optimizer
BootstrapFewShot = SamplerFewShot

__all__ = [
    "BenchmarkReport",
    "BenchmarkRunner",
    "BootstrapFewShot",
    "ClassSampler",
    "ItemResult",
    "LLMAugmenter",
    "LLMOptimizer",
    "Optimizer",
    "ParamChange",
    "Parameter",
    "ParameterType",
    "Proposal",
    "RandomSampler",
    "Sample",
    "Sampler",
    "SamplerFewShot",
    "StepRecord",
    "TextGradOptimizer",
    "TraceFewShot",
    "Trainer",
    "TrainerResult",
    "Variant",
    "VariantResult",
    "attach_cache",
    "bootstrap_ci",
    "build_variant",
    "evaluate_pipeline",
    "format_demos",
    "fresh_pipeline",
    "holm_adjust",
    "load_variants",
    "paired_permutation_test",
    "parse_new_value",
]
