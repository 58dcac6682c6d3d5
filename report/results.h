// The results tables of `maskc reproduce` and `maskc sweep` (results.md, results.json): one row
// per group of runs (report.h group_runs: only seeds pool), one table per task family, its
// columns from the family's metrics. No LibTorch: train/ builds its tables here.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "report/report.h"
#include "tasks/family.h"

namespace maskprior::report {

/// The columns of a family's table: its metrics shown in tables, the persistence metrics, its
/// diagnostics, and the steps its headline took to reach 95% (a column only where some row has a
/// value). Layer lists (prior mass, drift) are averaged over layers before averaging over seeds.
std::vector<tasks::Metric> table_columns(const tasks::TaskFamily& family);

/// {"mean", "std" (sample), "n"} of the row's seeds' values of `key` in summary.json; null when
/// no run has it.
nlohmann::json aggregate(const ReportRow& row, const std::string& key);

/// The row's metrics, aggregated over its seeds, for every column of its family's table.
nlohmann::json aggregate_row(const ReportRow& row);

/// Formats aggregated results (objects with "label", "seeds" and "metrics" as aggregate_row
/// writes them) as a Markdown table of `columns` (those that some row has), its columns aligned.
std::string results_table(const nlohmann::json& rows, const std::vector<tasks::Metric>& columns);

/// One table per task family (in the order of tasks::families()) of `rows`, whose aggregated
/// form (as results_table reads it) is `aggregated[i]` for rows[i].
std::string family_tables(const std::vector<ReportRow>& rows, const nlohmann::json& aggregated);

}  // namespace maskprior::report
