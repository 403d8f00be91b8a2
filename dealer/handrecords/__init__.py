"""Hand records: per board diagram, HCP, double-dummy table and par; HTML, PDF and PBN."""

from .analysis import BoardAnalysis, DDTable, Par, ParContract, analyse

__all__ = ["BoardAnalysis", "DDTable", "Par", "ParContract", "analyse"]
