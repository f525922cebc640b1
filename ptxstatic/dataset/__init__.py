"""Measured data: the SQLite dataset store (:mod:`.store`), collected samples (:mod:`.samples`), training
arrays read from a store (:mod:`.dataset`: DvfsDataset, load_dataset, open_data) and the importer of
gpuPTXModel data folders (:mod:`.gpuptxmodel`). See ``docs/dataset.md``."""
