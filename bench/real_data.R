#!/usr/bin/env Rscript
# Writes the real data sets of issue 29's benchmark as response files that
# `bfhpo infer` and bench/stan_reference.R read (header of item names, an id
# column, empty = missing), from Debian's r-cran-psychtools:
#   Rscript bench/real_data.R OUT_DIR
# epi.csv: the Eysenck Personality Inventory, 57 binary items as 0/1 (missing cells kept);
# spi.csv: the SAPA Personality Inventory's 135 items with 6 categories, as 0..5;
# and the one-dimensional scales a researcher fits an IRT model to, each item
# keyed by the package's scoring keys (a "-" key reversed: 1 - y, 5 - y):
# epi_neuroticism.csv: epi's N scale, 24 binary items, 3,570 persons, 2.2% missing;
# spi_neuroticism.csv: spi's Neuro scale, 14 items with 6 categories, 4,000 persons;
# epir_neuroticism.csv: epiR's first testing (474 persons), the N scale, 2.0% missing;
# geras_mcog.csv: GERAS's M.cog scale, 7 items of a 5-point scale (coded 2..6, as 0..4), 471 persons.
# The last two are small enough to train at init's length on a 2-core machine.
# psych's `ability` and `bfi` are kept aside for an independent check (the end of this file).
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) >= 1) args[1] else "."
dir.create(out, showWarnings = FALSE, recursive = TRUE)
write_responses <- function(responses, name) {
  responses <- as.data.frame(responses)
  file <- file.path(out, paste0(name, ".csv"))
  write.csv(cbind(id = seq_len(nrow(responses)), responses), file, row.names = FALSE, na = "")
  cat(sprintf("%s: %d persons x %d items, categories %s, %.1f%% of cells missing\n", file, nrow(responses),
              ncol(responses), paste(sort(unique(na.omit(unlist(responses)))), collapse = " "),
              100 * mean(is.na(as.matrix(responses)))))
}
data(epi, package = "psychTools")
write_responses(epi - 1, "epi")  # coded 1/2 in psychTools
data(spi, package = "psychTools")
items <- grep("^q_", names(spi))
write_responses(spi[, items] - 1, "spi")
keyed <- function(responses, keys, top) {
  names <- sub("^-", "", keys)
  scale <- responses[, names]
  reversed <- startsWith(keys, "-")
  scale[, reversed] <- top - scale[, reversed]
  scale
}
write_responses(keyed(epi - 1, psychTools::epi.keys$N, 1), "epi_neuroticism")
write_responses(keyed(spi[, items] - 1, psychTools::spi.keys$Neuro, 5), "spi_neuroticism")
epir <- psychTools::epiR[psychTools::epiR$time == 1, ]
write_responses(keyed(epir[, paste0("V", 1:57)] - 1, psychTools::epi.keys$N, 1), "epir_neuroticism")
write_responses(keyed(psychTools::GERAS.items - 2, psychTools::GERAS.keys$M.cog, 4), "geras_mcog")
# athenstaedt_f5.csv, athenstaedt_m5.csv: Athenstaedt's short femininity and
# masculinity scales (gender-role self-concept), 5 items of a 7-point scale
# each (coded 1..7, as 0..6), 576 persons: graded scales the GRM describes
# (one factor: first / second eigenvalue of the polychoric correlations 6.3
# and 5.0, largest residual correlation 0.08).
write_responses(keyed(psychTools::Athenstaedt - 1, psychTools::Athenstaedt.keys$F5, 6), "athenstaedt_f5")
write_responses(keyed(psychTools::Athenstaedt - 1, psychTools::Athenstaedt.keys$M5, 6), "athenstaedt_m5")
# epir_extraversion_complete.csv (issue 40): epiR's first testing, the E
# scale (24 binary items), the 445 of its 474 persons who answered every
# item: a real 2PL data set inside the shapes of an estimator trained for
# 16-24 items x 400-600 persons without missing cells.
epir_e <- keyed(epir[, paste0("V", 1:57)] - 1, psychTools::epi.keys$E, 1)
write_responses(epir_e[complete.cases(epir_e), ], "epir_extraversion_complete")
# bfi_neuroticism_by_education.csv (issue 40 part 5): one long file of real
# groups, bfi's N1-N5 (6 categories, coded 1..6, as 0..5; all keyed +,
# missing cells kept) with a column `education` naming each person's group
# (psychTools' codes: 1 HS, 2 finished HS, 3 some college, 4 college
# graduate, 5 graduate degree), the 2,577 persons who gave it: groups of 224,
# 292, 1,249, 394 and 418. No data set in psychTools or psych has binary
# items with a grouping of 5 groups of 150 or more: epi/epiR have none (epiR's
# 4 studies hold 63-196 persons), spi and bfi have 6-category items.
data(bfi, package = "psychTools")
grouped <- bfi[!is.na(bfi$education), ]
neuroticism <- grouped[, psychTools::bfi.keys$neuroticism] - 1
file <- file.path(out, "bfi_neuroticism_by_education.csv")
write.csv(cbind(id = seq_len(nrow(grouped)), education = paste0("edu", grouped$education), neuroticism),
          file, row.names = FALSE, na = "")
cat(sprintf("%s: %d persons x %d items in %s, %.1f%% of cells missing\n", file, nrow(neuroticism), ncol(neuroticism),
            paste(sprintf("%s %d", names(table(grouped$education)), table(grouped$education)), collapse = ", "),
            100 * mean(is.na(as.matrix(neuroticism)))))
# epi_extraversion_samples.csv (issue 40 part 5, the 2PL side): no data set
# here has binary items and real groups, so this one has random ones: 2,500 of
# the 3,037 persons who answered all 24 items of epi's E scale, drawn
# (seed 40) into 5 samples of 500 (column `sample`), the shape of an estimator
# trained for 16-24 items x 400-600 persons without missing cells.
# bench/real_groups.py splits a long file into its groups for Stan.
epi_e <- keyed(epi - 1, psychTools::epi.keys$E, 1)
complete <- which(complete.cases(epi_e))
set.seed(40)
drawn <- sample(complete, 2500)
samples <- rep(1:5, each = 500)
file <- file.path(out, "epi_extraversion_samples.csv")
write.csv(cbind(id = drawn, sample = paste0("s", samples), epi_e[drawn, ]), file, row.names = FALSE, na = "")
cat(sprintf("%s: %d persons x %d items in 5 samples of 500 (of %d complete)\n", file, length(drawn), ncol(epi_e),
            length(complete)))
# The independent check of issue 41 part 6 (one file, a shipped estimator
# against Stan): ability.csv, psych's 16 ICAR ability items (binary,
# 1,525 persons, 4.7% of cells missing), and bfi_neuroticism_300.csv, bfi's
# N1-N5 (6 categories, as 0..5) of its first 300 persons, 0.7% missing.
data(ability, package = "psychTools")
write_responses(ability, "ability")
write_responses(bfi[1:300, psychTools::bfi.keys$neuroticism] - 1, "bfi_neuroticism_300")
