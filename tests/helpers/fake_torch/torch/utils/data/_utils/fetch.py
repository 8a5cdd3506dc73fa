"""A stand-in for torch/utils/data/_utils/fetch.py, for
tests/e2e/analyzer_loader.sh: the fetcher a DataLoader worker calls for a
batch, each item from the Dataset's __getitem__, then collated (a sum
here).  Loaded by path (tests/helpers/fake_gpu.py)."""


class _MapDatasetFetcher:
    def __init__(self, dataset, items):
        self.dataset = dataset
        self.items = items

    def fetch(self, index):
        data = [self.dataset[index * self.items + k] for k in range(self.items)]
        return sum(data) & 0x7FFFFFFF
